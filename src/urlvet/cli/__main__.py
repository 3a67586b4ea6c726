"""``python -m urlvet.cli``: the ``urlvet`` command."""

from urlvet.cli import console

if __name__ == "__main__":
    console()
