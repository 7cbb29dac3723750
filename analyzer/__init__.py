"""ReuseLens analyzer: PCDepGraph reconstruction, source mapping and pattern findings."""

__version__ = "0.1.0"
