// SesameStore: see the module's documentation comments.
