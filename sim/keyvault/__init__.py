"""A fake Azure for scale sets whose GitHub credentials live in Azure Key Vault (``vaultConfig``).

``service`` holds what Azure knows (tenants, applications with their certificates, the vault's secrets
and who may read them) and answers as Microsoft Entra's token endpoint and Key Vault's secrets API do;
``server`` serves both over HTTPS with a CA of its own, under their public names; ``tunnel`` is the
forward proxy that reaches those names (no DNS here knows them), as a cluster's egress proxy would.
"""
