"""The read-only HTTP API over the journal: phase history, journal queries, health, metrics, timeline.

It reads the journal and never writes it.
"""
