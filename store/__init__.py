"""The journal: one SQLite database on aiosqlite that every observed event and decision is appended to.

It is the only way a fact enters the controller; the projection, phase history and replay read it.
"""
