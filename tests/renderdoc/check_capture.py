#!/usr/bin/python3
"""Checks a RenderDoc capture of one graph dispatch made through the layer.

usage: check_capture.py CAPTURE --buffer NAME --expect W0,W1,... --levels L0;L1;...

Opens CAPTURE with RenderDoc's Python module (python3-renderdoc, built for
Debian's /usr/bin/python3), replays it on the local Vulkan driver and checks:
1. the action list holds the layer's labels: a "dispatch graph" marker whose
   children are "level 0", "level 1", ... in order, level i holding one
   'node "X" [0]' marker per node X of the i-th ';'-separated group of
   --levels (','-separated), each marker around at least one dispatch;
2. the buffer named NAME (vkSetDebugUtilsObjectNameEXT) replays as zeros
   before the graph dispatch and as --expect (32-bit words) after it.
Prints the marker tree and the time taken to open and replay; exits 1 with
the reason on any mismatch, 2 on a usage error.
"""

import struct
import sys
import time

import renderdoc as rd


def fail(why):
    print(f"check_capture: FAIL: {why}")
    sys.exit(1)


def parse_args(argv):
    if len(argv) < 2:
        print(__doc__)
        sys.exit(2)
    args = {"capture": argv[1]}
    rest = argv[2:]
    if len(rest) % 2:
        print(__doc__)
        sys.exit(2)
    for key, value in zip(rest[::2], rest[1::2]):
        args[key.lstrip("-")] = value
    for key in ("buffer", "expect", "levels"):
        if key not in args:
            print(f"check_capture: --{key} is missing\n{__doc__}")
            sys.exit(2)
    args["expect"] = [int(w) for w in args["expect"].split(",")]
    args["levels"] = [level.split(",") for level in args["levels"].split(";")]
    return args


def name_of(action, sf):
    return action.GetName(sf)


def dispatches_under(action):
    found = 0
    for child in action.children:
        if child.flags & rd.ActionFlags.Dispatch:
            found += 1
        found += dispatches_under(child)
    return found


def last_event(action):
    return max([action.eventId] + [last_event(c) for c in action.children])


def find_graph(actions, sf):
    for a in actions:
        if name_of(a, sf).startswith("dispatch graph"):
            return a
        found = find_graph(a.children, sf)
        if found:
            return found
    return None


def check_markers(graph, levels, sf):
    """Returns the tree as lines; fails on the first difference."""
    lines = [name_of(graph, sf)]
    markers = [c for c in graph.children if c.flags & rd.ActionFlags.PushMarker]
    names = [name_of(m, sf) for m in markers]
    want = [f"level {i}" for i in range(len(levels))]
    if names != want:
        fail(f"graph marker's children are {names}, expected {want}")
    for level, nodes in zip(markers, levels):
        lines.append(f"  {name_of(level, sf)}")
        node_markers = {name_of(c, sf): c for c in level.children if c.flags & rd.ActionFlags.PushMarker}
        for node in nodes:
            label = f'node "{node}" [0]'
            marker = node_markers.get(label)
            if marker is None:
                fail(f"{name_of(level, sf)} has no marker {label!r} (it has {sorted(node_markers)})")
            count = dispatches_under(marker)
            if count == 0:
                fail(f"marker {label!r} holds no dispatch")
            lines.append(f"    {label}: {count} dispatch(es)")
    return lines


def words(controller, buffer_id, count):
    data = controller.GetBufferData(buffer_id, 0, 4 * count)
    return list(struct.unpack(f"<{count}I", data))


def main():
    args = parse_args(sys.argv)
    start = time.monotonic()
    rd.InitialiseReplay(rd.GlobalEnvironment(), [])
    cap = rd.OpenCaptureFile()
    result = cap.OpenFile(args["capture"], "", None)
    if result != rd.ResultCode.Succeeded:
        fail(f"cannot open {args['capture']}: {result}")
    if cap.LocalReplaySupport() != rd.ReplaySupport.Supported:
        fail(f"this machine cannot replay the capture: {cap.LocalReplaySupport()}")
    result, controller = cap.OpenCapture(rd.ReplayOptions(), None)
    if result != rd.ResultCode.Succeeded:
        fail(f"replay failed to start: {result}")
    opened = time.monotonic()
    try:
        sf = controller.GetStructuredFile()
        graph = find_graph(controller.GetRootActions(), sf)
        if graph is None:
            fail("no 'dispatch graph' marker in the action list (were debug utils enabled?)")
        for line in check_markers(graph, args["levels"], sf):
            print(f"check_capture: {line}")

        named = [r.resourceId for r in controller.GetResources() if r.name == args["buffer"]]
        if len(named) != 1:
            fail(f"{len(named)} resources are named {args['buffer']!r}")
        count = len(args["expect"])
        controller.SetFrameEvent(graph.eventId, True)
        before = words(controller, named[0], count)
        controller.SetFrameEvent(last_event(graph), True)
        after = words(controller, named[0], count)
        replayed = time.monotonic()
        print(f"check_capture: {args['buffer']} before the graph: {before}")
        print(f"check_capture: {args['buffer']} after the graph:  {after}")
        if any(before):
            fail("the buffer is not zero before the graph dispatch")
        if after != args["expect"]:
            fail(f"replayed {after}, the CPU model says {args['expect']}")
        print(
            f"check_capture: ok: opened and replay initialised in {opened - start:.2f} s, "
            f"replayed to the graph's end in {replayed - opened:.2f} s"
        )
    finally:
        controller.Shutdown()
        cap.Shutdown()
        rd.ShutdownReplay()


if __name__ == "__main__":
    main()
