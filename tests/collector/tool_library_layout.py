"""run.json laid out as the tool library writes it (collector/native/src/run_json.cpp): each top-level member on a
line indented by two spaces, a list's items four spaces in. The launcher reads that text while the app tears
down; fake apps that wrote json_lines' one-space layout instead once hid a launcher that never recognised the
real library's finish (session 12). SOURCE is the function as source, for fake apps to include."""

from __future__ import annotations

SOURCE = """
def tool_library_text(m):
    import json
    members = []
    for key, value in m.items():
        if isinstance(value, list) and value:
            items = ",\\n    ".join(json.dumps(v) for v in value)
            members.append("  " + json.dumps(key) + ": [\\n    " + items + "\\n  ]")
        else:
            members.append("  " + json.dumps(key) + ": " + json.dumps(value))
    return "{\\n" + ",\\n".join(members) + "\\n}\\n"
"""

_namespace: dict = {}
exec(SOURCE, _namespace)
tool_library_text = _namespace["tool_library_text"]
