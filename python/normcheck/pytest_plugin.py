"""normcheck's pytest plugin (entry point pytest11, loaded when the package is installed).

A test decorated with @normcheck.cases runs one item per case; an item whose function skips
the case is SKIPPED. As normcheck.check() does not pass a function that evaluated nothing,
this plugin fails the run (exit code 1, with a line per test) when every selected case of a
decorated test was skipped: a Skip raised for everything, or a typo in the function's test
of a convention key, cannot end green. Items skipped before they run (a skipif mark, e.g. a
framework that is not installed) do not count. Under pytest-xdist the controller judges, from the
reports of every worker."""

_MARK = "normcheck_cases"
_tally = {}  # test id without its [case] parameter -> [evaluated, skipped]


def pytest_configure(config):
    config.addinivalue_line("markers", f"{_MARK}: a test parametrized over normcheck cases (normcheck.cases)")


def pytest_runtest_logreport(report):
    if _MARK not in report.keywords:
        return
    t = _tally.setdefault(report.nodeid.split("[", 1)[0], [0, 0])
    if report.when == "call" and (report.passed or report.failed or hasattr(report, "wasxfail")):
        t[0] += 1  # evaluated: passed, failed, or an expected failure
    elif report.when == "call" and report.skipped:
        t[1] += 1  # skipped by the function (a skip mark, in setup, is the environment's choice)


def pytest_sessionfinish(session, exitstatus):
    if hasattr(session.config, "workerinput"):
        return  # an xdist worker: the controller sees every report
    empty = sorted(test for test, (evaluated, skipped) in _tally.items() if evaluated == 0 and skipped > 0)
    if not empty:
        return
    tr = session.config.pluginmanager.get_plugin("terminalreporter")
    for test in empty:
        line = f"normcheck: {test}: every selected case was skipped; nothing was checked"
        if tr is not None:
            tr.write_line(line, red=True)
    if session.exitstatus == 0:
        session.exitstatus = 1
