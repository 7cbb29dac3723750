"""`python -m lsp_server`: the ReuseLens language server on stdio (logs go to stderr)."""

from lsp_server.cli import main

raise SystemExit(main())
