"""The rules urlvet applies to a URL, one module a family (UV1xx ... UV5xx)."""
