"""urlvet: decide whether a URL an MCP server asks a client to open is safe to offer the user.

Parse as a browser does, check the transport, the address, the name and its lookalikes, and the
URL's relation to the server that asked; answer allow, warn or block with findings.

    >>> import urlvet
    >>> urlvet.vet("https://google.com@evil.example/", server="https://mcp.example.com/").decision
    <Decision.BLOCK: 'block'>
"""

from urlvet.engine import Vetter, vet
from urlvet.errors import InputError, PolicyError, UrlvetError
from urlvet.findings import Decision, Finding, Severity, Verdict
from urlvet.policy import Policy, load_policy
from urlvet.server import Server

__all__ = [
    "Decision",
    "Finding",
    "InputError",
    "Policy",
    "PolicyError",
    "Server",
    "Severity",
    "UrlvetError",
    "Verdict",
    "Vetter",
    "load_policy",
    "vet",
]
__version__ = "0.1.0"
