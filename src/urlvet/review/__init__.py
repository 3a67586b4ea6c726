"""Reviewing policies as code: their fixtures (`urlvet policy test`), what a change to one
changes (`urlvet policy diff`), and why a verdict came out as it did (`urlvet check --explain`).
"""
