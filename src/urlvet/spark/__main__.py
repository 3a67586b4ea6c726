"""``python -m urlvet.spark INPUT OUTPUT ...``: an entry script that runs the Spark job's command
line, which lives with the others in urlvet.cli (nothing imports this module)."""

from urlvet.cli import spark_main

spark_main()
