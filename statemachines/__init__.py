"""The four phase machines of arcsm, their guards, the update predicates and the effect types.

Pure: no I/O, no ``await``, no clock reads. A machine reads a snapshot and returns a decision
(transitions taken and effects as data); the controller records and executes it. Each machine module
ends with its ``DECLARATION`` (``declaring``): what the kind owns, reads and watches, from which the
controller derives its snapshots, the keys a change wakes, the watched kinds and their permissions.

``jsonvalues`` declares ``JsonObject`` and the coercions that read observed JSON, for every package;
``objects`` the typed views of the objects the machines read (metadata, conditions, each kind's spec and
status); ``effectresults`` the typed result of an effect, which the executor answers and a decision reads.
"""
