"""`workbench web`: the Workbench app in the browser, each tab an app process served with textual-serve."""
