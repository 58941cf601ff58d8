"""The GitHub Actions service client and the listener. Tokens and JIT configs never leave this package
except to the Kubernetes Secrets they are written to."""
