# tests/load/ holds the on-demand load test, a script run by `make load-test`; pytest collects nothing here.
collect_ignore = ["load_test.py"]
