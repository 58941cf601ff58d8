"""The runtime: work queue, reconcile loop, effect executor, leader election, configuration and the
``arcsm`` command line. It is the only package that knows every other one."""
