#!/bin/sh
# Stand-in for Prisma's schema engine, which cannot be downloaded here. `prisma generate`
# does not need it; any command that does fails with this message.
echo "schema engine not available: apply migrations with 'npm run migrate'" >&2
exit 1
