"""Tools for writing and checking policies: explain, doctor, test cases, evaluation, the
pytest helpers and plugin. They return data; the commands print it."""
