"""ReuseLens, the application: the `reuselens` command (CLI), the bundled demo and `python -m reuselens`.

The libraries it drives install beside it under this namespace: `reuselens.analyzer` (engine, patterns, source
mapping; imports neither of the others), `reuselens.collector` (the profiler launcher and its native tool
library) and `reuselens.lsp_server` (the language server, which reads results through the analyzer). Only this
package's `cli` imports all three (docs/architecture.md). Importing the libraries runs nothing here.
"""
