"""A class's learning management system: the roster in, the grades out.

`roster` reads and checks the class roster CSV; `export` writes grades in an
LMS's own CSV import format through nbgrader's export plugin interface.
"""
