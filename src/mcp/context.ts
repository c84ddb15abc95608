/**
 * What every tool call gets: the caller's service context (reads go through the services and their
 * access rule, never to the data layer), the console's origin for `url`s, and the cursor secret.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { AppError } from '../errors';
import { onSnapshot, type Ctx } from '../services/context';
import { CursorError, openCursor, sealCursor, type CursorScope } from './cursor';

export interface McpContext {
  ctx: Ctx;
  /** The service's own origin (PUBLIC_URL, else the request's): console links start here. */
  origin: string;
}

const seg = encodeURIComponent;
export const projectUrl = (m: McpContext, projectId: string) => `${m.origin}/projects/${seg(projectId)}`;
export const sessionUrl = (m: McpContext, projectId: string, sessionId: string, exchange?: number) =>
  `${projectUrl(m, projectId)}/sessions/${seg(sessionId)}${exchange ? `#exchange-${exchange}` : ''}`;

/** A tool's answer that is not a result: `isError` with a message the agent can act on. */
export class ToolError extends Error {}

const scopeOf = (m: McpContext, tool: string, filters: Record<string, unknown>): CursorScope => ({
  secret: m.ctx.deps.config.jwtSecret,
  userId: m.ctx.user.id,
  tool,
  filters,
});
export const seal = (m: McpContext, tool: string, filters: Record<string, unknown>, position: unknown) => sealCursor(scopeOf(m, tool, filters), position);
export const unseal = (m: McpContext, tool: string, filters: Record<string, unknown>, cursor: string) => openCursor(scopeOf(m, tool, filters), cursor);

/**
 * The message of a domain error as an agent should read it. Another user's project or session
 * reads exactly like one that does not exist (nothing about it is revealed).
 */
function messageOf(err: unknown, args: Record<string, unknown>): string | null {
  if (err instanceof ToolError || err instanceof CursorError) return err.message;
  if (!(err instanceof AppError)) return null;
  const project = typeof args.projectId === 'string' ? args.projectId : undefined;
  const session = typeof args.sessionId === 'string' ? args.sessionId : undefined;
  switch (err.code) {
    case 'NOT_FOUND':
    case 'FORBIDDEN':
      if (session && err.details.sessionId !== undefined) return `Session ${session} not found in project ${project}`;
      if (project) return `Project ${project} not found (list_projects shows the projects you can read)`;
      return 'Not found';
    case 'VALIDATION_ERROR':
      return err.message;
    case 'SERVICE_UNAVAILABLE':
      return 'Search is temporarily unavailable; try again shortly (the reads work)';
    default:
      return null;
  }
}

/**
 * Runs a tool on one database snapshot (all its reads see one committed version) and turns the
 * outcome into a CallToolResult: `structuredContent` with its text rendering, or `isError`.
 */
export async function runTool(
  m: McpContext,
  args: Record<string, unknown>,
  fn: (m: McpContext) => Promise<{ structured: Record<string, unknown>; text: string }>,
): Promise<CallToolResult> {
  try {
    const out = await onSnapshot(m.ctx, (ctx) => fn({ ...m, ctx }));
    return { content: [{ type: 'text', text: out.text }], structuredContent: out.structured };
  } catch (err) {
    const message = messageOf(err, args);
    if (message === null) {
      m.ctx.log.error({ err: { message: err instanceof Error ? err.message : String(err) } }, 'mcp tool failed');
      return { content: [{ type: 'text', text: 'Internal error; try again' }], isError: true };
    }
    return { content: [{ type: 'text', text: message }], isError: true };
  }
}
