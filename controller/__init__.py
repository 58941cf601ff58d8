"""The runtime: it composes every other package, and is the only one that knows them all.

Five subpackages, named for what they hold, each importing only those listed after it (the layers
contract of ``pyproject.toml``; every module of the controller sits in one of them):

* ``emulated``: ``arcsm demo`` and ``arcsm sim``, the only modules that import the emulated world (``sim``);
* ``commands``: the ``arcsm`` command line, one module per command;
* ``installation``: what gets installed: the CRDs, the RBAC rules, the Helm chart rendered;
* ``loop``: the runtime loop: tail, fold, queue, decide, record, timers, leader election, replay;
* ``executor``: the effects and their executor, the I/O edge towards Kubernetes and the Actions service.
"""
