/**
 * What the OpenAI Agents tests share: models that implement the SDK's Model interface without a
 * network (one that answers with the turn's number, one that calls a named tool, one that opens
 * its answer with a compaction item as the Responses API does when it compacts server-side), and
 * helpers to read a history's texts.
 */
import {
  Usage,
  type AgentInputItem,
  type Model,
  type ModelRequest,
  type ModelResponse,
  type ResponseStreamEvent,
} from '@openai/agents';

export function userText(item: AgentInputItem): string | undefined {
  if (item.type !== 'message' && !('role' in item)) return undefined;
  const message = item as { role?: string; content?: unknown };
  if (message.role !== 'user') return undefined;
  if (typeof message.content === 'string') return message.content;
  if (!Array.isArray(message.content)) return undefined;
  return message.content.map((part: { text?: string }) => part.text ?? '').join('');
}

export function assistantText(item: AgentInputItem): string | undefined {
  const message = item as { role?: string; content?: unknown };
  if (message.role !== 'assistant' || !Array.isArray(message.content)) return undefined;
  return message.content.map((part: { text?: string }) => part.text ?? '').join('');
}

/** Each item as one line: `user: …`, `assistant: …`, or its type. */
export function lines(items: AgentInputItem[]): string[] {
  return items.map((item) => {
    const user = userText(item);
    if (user !== undefined) return `user: ${user}`;
    const assistant = assistantText(item);
    if (assistant !== undefined) return `assistant: ${assistant}`;
    return item.type ?? 'item';
  });
}

function lastUserText(input: ModelRequest['input']): string {
  if (typeof input === 'string') return input;
  for (const item of [...input].reverse()) {
    const text = userText(item);
    if (text !== undefined) return text;
  }
  return '';
}

let responses = 0;

function answer(text: string, extra: ModelResponse['output'] = []): ModelResponse {
  responses += 1;
  return {
    usage: new Usage(),
    responseId: `resp_${responses}`,
    output: [
      ...extra,
      {
        id: `msg_${responses}`,
        type: 'message',
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text }],
      },
    ],
  };
}

abstract class ModelWithoutStreaming implements Model {
  abstract getResponse(request: ModelRequest): Promise<ModelResponse>;

  getStreamedResponse(): AsyncIterable<ResponseStreamEvent> {
    throw new Error('these tests do not stream');
  }
}

/** Answers `reply to <last user text>`; keeps how many items each input held. */
export class EchoModel extends ModelWithoutStreaming {
  readonly inputs: number[] = [];

  getResponse(request: ModelRequest): Promise<ModelResponse> {
    const size = typeof request.input === 'string' ? 1 : request.input.length;
    this.inputs.push(size);
    return Promise.resolve(answer(`reply to ${lastUserText(request.input)}`));
  }
}

/** Answers like EchoModel, its answer opened by a compaction item of everything before it. */
export class CompactingModel extends ModelWithoutStreaming {
  getResponse(request: ModelRequest): Promise<ModelResponse> {
    const compaction = { type: 'compaction' as const, encrypted_content: 'compacted turns' };
    return Promise.resolve(answer(`reply to ${lastUserText(request.input)}`, [compaction]));
  }
}

/** Calls the tool the model settings choose, with the last user text as its query. */
export class ToolCallingModel extends ModelWithoutStreaming {
  #calls = 0;

  getResponse(request: ModelRequest): Promise<ModelResponse> {
    const name =
      typeof request.modelSettings.toolChoice === 'string'
        ? request.modelSettings.toolChoice
        : 'approved_echo';
    this.#calls += 1;
    const callId = `call_${this.#calls}`;
    return Promise.resolve({
      usage: new Usage(),
      output: [
        {
          id: `fc_${callId}`,
          type: 'function_call',
          name,
          callId,
          status: 'completed',
          arguments: JSON.stringify({ query: lastUserText(request.input) }),
        },
      ],
    });
  }
}
