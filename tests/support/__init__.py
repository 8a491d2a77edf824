"""What the test modules share: a test module imports these, never another test module."""
