"""The ``arcsm`` command line: its table of commands (``cli``, loaded lazily through ``lazycommands``,
each usage error one line through ``usagelines``), one module per command with its options
(``run_command``, ``listener_command``, ``replay_command``, ``history_command``, ``graph_command``,
``manifests_command``, ``journal_commands``), and what the processes of ``arcsm run`` and
``arcsm listener`` set up around the loop: their options parsed (``runflags``), their log lines
(``logformat``), httpx and kubernetes_asyncio loaded lazily (``lazyhttpx``, ``lazykube``) and the
listener as a process (``listening``).

Rule: a command may import the installation, the loop and the executor, never the emulated world
(``emulated``, which holds ``arcsm demo`` and ``arcsm sim``); and a command imports only what it runs, so
``arcsm listener``, which every listener pod runs, pays for neither the controller nor the emulator.
"""
