"""visualize=True: plotly figures like HTA's where plotly is installed; where it is not, one message (once
per process) and the frames are still returned."""
import sys

_said = False


def plotly():
    """plotly.express, or None after saying once that it is missing."""
    global _said
    try:
        import plotly.express as px  # noqa: F401
        return px
    except ImportError:
        if not _said:
            print("htac: plotly is not installed: visualize=True draws nothing (the frames are returned); "
                  "install plotly to see the charts", file=sys.stderr)
            _said = True
        return None


def bar(df, x, y, title, **kw):
    px = plotly()
    if px is None or df is None or len(df) == 0:
        return
    px.bar(df, x=x, y=y, title=title, **kw).show()


def pie(df, values, names, title):
    px = plotly()
    if px is None or df is None or len(df) == 0:
        return
    px.pie(df, values=values, names=names, title=title).show()


def line(df, x, y, color, title):
    px = plotly()
    if px is None or df is None or len(df) == 0:
        return
    px.line(df, x=x, y=y, color=color, title=title, line_shape="hv").show()
