"""`python -m reuselens.lsp_server`: the ReuseLens language server on stdio (logs go to stderr)."""

from reuselens.lsp_server.cli import main

raise SystemExit(main())
