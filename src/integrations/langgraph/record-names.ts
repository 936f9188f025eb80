/**
 * Where a thread's checkpoints live: one fencegate scope per thread, and inside it
 *
 *   cp/<ns>/<checkpoint id>                  a checkpoint, its metadata and its parent
 *   bl/<ns>/<channel>/<version>              one version of one channel's value
 *   wr/<ns>/<checkpoint id>/<task id>/<idx>  a pending write of a task
 *
 * Every piece is escaped (see name-escape.ts), so `/` only ever separates pieces and a prefix such
 * as `cp/<ns>/` selects exactly one namespace. Checkpoint ids are uuid6, kept as they are, so name
 * order is time order and "newest first" is a descending page of the name index.
 */
import { escapeName } from '../name-escape.js';

export const DEFAULT_SCOPE_PREFIX = 'langgraph/';

export function checkpointPrefix(namespace?: string): string {
  return namespace === undefined ? 'cp/' : `cp/${escapeName(namespace)}/`;
}

export function checkpointName(namespace: string, checkpointId: string): string {
  return `${checkpointPrefix(namespace)}${escapeName(checkpointId)}`;
}

export function blobName(namespace: string, channel: string, version: string | number): string {
  return `bl/${escapeName(namespace)}/${escapeName(channel)}/${escapeName(String(version))}`;
}

export function writesPrefix(namespace: string, checkpointId: string): string {
  return `wr/${escapeName(namespace)}/${escapeName(checkpointId)}/`;
}

export function writeName(
  namespace: string,
  checkpointId: string,
  taskId: string,
  index: number,
): string {
  return `${writesPrefix(namespace, checkpointId)}${escapeName(taskId)}/${index}`;
}
