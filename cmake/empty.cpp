// Placeholder translation unit for a module with no sources yet.
