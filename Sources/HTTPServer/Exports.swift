// The wire format (requests, responses, problems and their parsing) lives in HTTPWire, which builds without
// this module's dependencies (the fuzz targets compile it alone, fuzz/README.md); an importer of HTTPServer
// sees it as before.
@_exported import HTTPWire
