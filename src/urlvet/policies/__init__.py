"""The built-in policies, shipped inside the package: ``default`` and ``strict``.

Each ``NAME.yaml`` is reachable by its name (``--policy strict``, ``load_policy("strict")``,
``extends: default``), sits beside its ``NAME.fixtures.yaml`` (the URL cases it must decide
as they say) and is described by ``policy.schema.json``.
"""
