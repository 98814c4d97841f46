"""What the profiling checkers (check_sites.py, check_pool.py) share: heapprof-report's JSON
read with each context's frames resolved, and the list of failed expectations they print."""
import json

problems = []


def expect(what, ok):
    if not ok:
        problems.append(what)


def load(path):
    """The report's JSON with each context's frames resolved through the frame table
    (schema 2: contexts list indices into doc["frame_table"])."""
    with open(path) as f:
        doc = json.load(f)
    expect(f"schema_version {doc.get('schema_version')}, expected 2", doc.get("schema_version") == 2)
    for c in doc["contexts"]:
        c["frames"] = [doc["frame_table"][i] for i in c["frames"]]
    return doc
