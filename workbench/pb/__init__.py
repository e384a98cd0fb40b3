"""Generated protocol code (tools/gen_proto.py); never edit by hand."""
