"""The libraries' objects after labs.ui.first_imports.import_libraries: prints two whole numbers, the
objects frozen out of the garbage collector (gc.get_freeze_count()) and those it still tracks.

Run by tests/system/test_first_imports.py: a rerun of a page must not walk the libraries' objects."""

import gc

from labs.ui.first_imports import import_libraries

if __name__ == "__main__":
    import_libraries()
    print(gc.get_freeze_count(), len(gc.get_objects()))
