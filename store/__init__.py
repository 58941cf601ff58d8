"""The journal: one SQLite database on aiosqlite that every observed event and decision is appended to.

It is the only way a fact enters the controller; the projection, phase history and replay read it.
The rule of the package: a record, once appended, is never changed, reordered or lost (retention only
forgets the oldest, and says so in its horizons); nothing secret is ever written.

Modules, by what they hold:

* ``records`` — the ``Record`` type and Secret redaction for watchers; ``redacting`` — what the journal
  itself strips from every body before it is written;
* ``journal`` — ``Journal``: open, append (group commit, ``appending``), read and tail (``reading``),
  snapshots (``snapshots``), retention (``retention``), import; ``ports`` — the Protocols to type against;
* ``projection`` — latest object per key and the owner index; ``rows`` — records as checksummed rows;
* ``schema`` — tables, format version and upgrades (``upcasting``); ``exporting`` — JSONL;
  ``verifying`` — the integrity check; ``settings``, ``clocks``, ``locking``, ``errors``.
"""
