"""GPU memory waste per data object: DrGPUM's object-level patterns (seed 002) over a memory timeline.

timeline.py reads the timeline document (docs/memory.md), peak.py computes the memory curve and what a changed
lifetime does to its peak, patterns.py turns both into findings.
"""
