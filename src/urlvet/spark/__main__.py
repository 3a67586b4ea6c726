"""``python -m urlvet.spark INPUT OUTPUT ...``: the Spark job's command line (in urlvet.cli)."""

from urlvet.cli import spark_main

spark_main()
