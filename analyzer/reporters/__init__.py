"""The writers: one module per output format, each turning report.json's dict (docs/report-format.md) into text.

Findings of a report, most wasteful first: findings_table (terminal), findings_csv, findings_json and
findings_sarif (SARIF 2.1.0 for CI and code scanning); the first three start from findings_rows.
One kernel's PCDepGraph: graph_dot (Graphviz), graph_graphml, graph_html (self-contained page) and
graph_accelprof (AccelProf's per-kernel dependency layout).
A run's memory analysis (reuselens memory): memory_json (the document the others read), memory_table,
memory_sarif and memory_html (the timeline page). sarif holds what both SARIF writers share.
"""
