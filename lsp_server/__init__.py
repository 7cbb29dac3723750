"""ReuseLens language server."""
