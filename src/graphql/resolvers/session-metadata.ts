/** SessionMetadata: the documented fields, and the extra string keys clients send that the schema names. */
import type { SessionMetadata as Metadata } from '../../services/sessions';
import type { ResolversOf } from './complete';

function extra(m: Metadata, key: string): string | null {
  const v = m[key];
  return typeof v === 'string' ? v : null;
}

export const SessionMetadata: ResolversOf<'SessionMetadata'> = {
  clientName: (m) => m.clientName,
  clientVersion: (m) => m.clientVersion,
  agentName: (m) => m.agentName,
  deviceId: (m) => m.deviceId,
  gitBranches: (m) => m.gitBranches,
  llmModels: (m) => m.llmModels,
  tags: (m) => m.tags,
  machineName: (m) => extra(m, 'machineName'),
  title: (m) => extra(m, 'title'),
  summary: (m) => extra(m, 'summary'),
};
