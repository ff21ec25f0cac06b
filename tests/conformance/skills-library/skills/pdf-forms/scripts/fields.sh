#!/bin/sh
# Print the names of a PDF form's fields, one a line (a supporting file of the pdf-forms skill).
qpdf --json "$1" | grep -o '"/T": "[^"]*"'
