"""Helpers the tests share (no tests here): the one row factory (`rows`), the scripted
knowledge base and model of the generation tests (`scripted_kb`), and the scoring tests'
files and judge (`scoring`). `tests/conftest.py` turns the common uses into fixtures."""
