"""What gets installed: the four custom resources declared as data (``resources``) and rendered as CRDs
(``crdgen``), the RBAC rules arcsm needs (``permissions``), and the Helm chart rendered by Helm
(``manifests``).

Rule: it derives what it renders from what the runtime does, so it may import the loop's declarations
(the kinds watched: ``loop.declared``) and the executor's table of kinds; the loop and the executor never
import it, so a running controller does not load the chart.
"""
