"""The emulated world put to use: ``arcsm demo`` (``demo``, the story it plays, ``demostory``, and
``clusterdemo`` for ``--in-cluster``), ``arcsm sim`` (``sim_command``, ``simulating``), the arcsm image the
emulated kubelet runs (``simimage``), and waiting on a condition with a deadline (``waiting``), as the
demo's steps and the tests do.

Rule: these are the only modules of arcsm's packages that may import ``sim``, so the controller and the
listener never carry the emulated world nor decide by it. They sit on top: nothing else of the controller
imports them; the command line names ``arcsm demo`` and ``arcsm sim`` in its lazy table, so they are loaded
only when one of them runs.
"""
