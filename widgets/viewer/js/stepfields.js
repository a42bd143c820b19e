// A step's fields as capture declares them (capture/steps.py, STEP_FIELDS): written by
// `python -m widgets.viewer.stepfields`, never by hand. `column` says how a field is
// sent as columns: place, plain, text (an index into `strings`), table (an index into
// `table`), sparse ([step, value] pairs where not empty); `default` is read where a
// recording made before the field existed has no column for it.
export const STEP_FIELDS = [
  {"name": "index", "column": "place"},
  {"name": "offset", "column": "plain"},
  {"name": "opname", "column": "text"},
  {"name": "argrepr", "column": "text"},
  {"name": "lineno", "column": "plain"},
  {"name": "depth", "column": "plain"},
  {"name": "code", "column": "plain"},
  {"name": "code_name", "column": "text", "default": ""},
  {"name": "graph_size", "column": "plain", "default": 0},
  {"name": "nodes_added", "column": "sparse", "default": []},
  {"name": "nodes_renamed", "column": "sparse", "default": []},
  {"name": "guards_added", "column": "sparse", "default": []},
  {"name": "inline_stack", "column": "table", "table": "inline_stacks", "default": []},
  {"name": "stack", "column": "plain", "default": []},
  {"name": "locals", "column": "table", "table": "locals_table", "default": {}},
];
