"""urlvet's exception types. Messages are written for the person who must fix the input."""

from __future__ import annotations


class UrlvetError(Exception):
    """Base class of every error urlvet raises on purpose."""


class PolicyError(UrlvetError):
    """A policy file or policy value is invalid. The message names the file, line and key."""


class InputError(UrlvetError):
    """An input (file, JSON message, argument) cannot be used. The message says why."""
