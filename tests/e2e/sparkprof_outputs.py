"""Readers of what the driver plugin writes: stage flame graph pages and the saved profile."""

import html
import json
import os
import re
import struct
import subprocess
import tempfile


def flame_graph_data(path):
    """The profile JSON embedded in a stage flame graph page, or None."""
    with open(path, encoding="utf-8") as f:
        page = f.read()
    match = re.search(r'<script type="application/json" id="profile-data">(.*?)</script>',
                      page, re.S)
    if not match:
        return None
    text = match.group(1)
    # The renderer escapes '<' and '/' inside the script block; JSON accepts both escapes as is.
    return json.loads(html.unescape(text) if "&quot;" in text else text)


def category_times(data):
    """{category: sampled time} of a flame graph's profile data."""
    return dict(zip(data["categories"], data["categoryTotals"]))


def frames_with_category(data, needle):
    """(frame name, category name, total) of every node whose frame name contains needle."""
    names, categories, nodes = data["names"], data["categories"], data["nodes"]
    found = []
    for i in range(0, len(nodes), 5):
        name = names[nodes[i]]
        if needle in name:
            found.append((name, categories[nodes[i + 1]], nodes[i + 2]))
    return found


def read_profile_batches(profile_path, flatc, schema):
    """Every Batch of a saved profile (*.sparkprof) as JSON, decoded by flatc with the schema.

    The file is a sequence of size-prefixed buffers (a little-endian uint32 size, then the
    buffer); each one is decoded with --defaults-json, so untagged samples show their -1 tags.
    """
    with open(profile_path, "rb") as f:
        data = f.read()
    batches = []
    with tempfile.TemporaryDirectory() as scratch:
        paths = []
        offset = 0
        while offset + 4 <= len(data):
            (size,) = struct.unpack_from("<I", data, offset)
            path = os.path.join(scratch, f"batch-{len(paths):06d}.bin")
            with open(path, "wb") as out:
                out.write(data[offset + 4:offset + 4 + size])
            paths.append(path)
            offset += 4 + size
        if offset != len(data):
            raise ValueError(f"{profile_path}: {len(data) - offset} trailing bytes after "
                             f"{len(paths)} batches")
        for start in range(0, len(paths), 200):
            run = subprocess.run(
                [flatc, "--json", "--strict-json", "--raw-binary", "--defaults-json",
                 "-o", scratch, schema, "--"] + paths[start:start + 200],
                capture_output=True, text=True, timeout=120)
            if run.returncode != 0:
                raise ValueError(f"flatc could not decode {profile_path}: {run.stderr[:500]}")
        for path in paths:
            with open(path[:-len(".bin")] + ".json") as f:
                batches.append(json.load(f))
    return batches
