"""The effects and their executor (DESIGN.md "Act"): one function per effect type (``executing``,
``kubeeffects``, ``actionseffects``, ``secreteffects``), the Kubernetes requests they send
(``kubewriting``), the Actions clients and the scopes they resolve (``actionsclients``, ``scopes``), the
Secrets they write (``secrets``), their results and errors (``results``, ``errors``), what every effect
function is given (``contexts``), the outbox of effects recorded but not yet answered (``outbox``), and the
API server's answers about Secrets, which no watcher lists, handed to an injected observer (``observing``).

Rule: the bottom layer: it imports nothing else of the controller. An effect carries all its execution
needs, and what it did goes back to the loop as a result to journal, never as a call into the loop.
"""
