"""qrenderdoc start-up script: opens the capture named by $EMU_SE_CAPTURE
with the event browser in the main area and the graph's markers expanded
(the README's picture, docs/renderdoc-event-browser.png).

usage: EMU_SE_CAPTURE=hello.rdc qrenderdoc --python tests/renderdoc/event_browser.py

It runs inside qrenderdoc (`pyrenderdoc` is its capture context). Selecting
an event expands the markers around it: one dispatch in each node marker,
and one command of the scratch initialisation.
"""

import os

import qrenderdoc as qrd
import renderdoc as rd

path = os.environ["EMU_SE_CAPTURE"]
ctx = pyrenderdoc  # noqa: F821 (qrenderdoc's global)
ctx.LoadCapture(path, rd.ReplayOptions(), path, False, True)
ctx.AddDockWindow(ctx.GetEventBrowser().Widget(), qrd.DockReference.MainToolArea, None)


def dispatches(actions):
    for a in actions:
        if a.flags & (rd.ActionFlags.Dispatch | rd.ActionFlags.Clear | rd.ActionFlags.Copy):
            yield a.eventId
        yield from dispatches(a.children)


for event in dispatches(ctx.CurRootActions()):
    ctx.SetEventID([], event, event)
ctx.RaiseDockWindow(ctx.GetEventBrowser().Widget())
