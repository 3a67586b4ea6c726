"""``python -m urlvet``: the ``urlvet`` command."""

from urlvet.cli import main

if __name__ == "__main__":
    main(prog_name="urlvet")
