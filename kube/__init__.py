"""What every edge of arcsm that talks to a Kubernetes API server shares: ``failures``, the one reading of
a failed request (status code, Status reason and message, Retry-After) and what it calls for, and
``clients``, the ``ApiClient`` each process opens.

It sits below the packages that use it because they may not import each other: the watchers, the
controller's executor and leader election, and the listener's patches in ``actions`` (which may import
nothing else of the project). It imports nothing of the project.
"""
