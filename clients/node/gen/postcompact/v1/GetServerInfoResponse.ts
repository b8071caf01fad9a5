// Original file: ../../proto/postcompact/v1/postcompact.proto

import type { Long } from '@grpc/proto-loader';

export interface GetServerInfoResponse {
  /**
   * daemon version
   */
  'version'?: (string);
  /**
   * "postcompact.v1"
   */
  'apiVersion'?: (string);
  'capabilities'?: (string)[];
  'pid'?: (number | string | Long);
  'socketPath'?: (string);
  /**
   * 0 when not listening on TCP
   */
  'tcpPort'?: (number);
  'startedAtMs'?: (number | string | Long);
  /**
   * "127.0.0.1:PORT" or "[::1]:PORT"; empty when not listening on TCP
   */
  'tcpAddress'?: (string);
}

export interface GetServerInfoResponse__Output {
  /**
   * daemon version
   */
  'version': (string);
  /**
   * "postcompact.v1"
   */
  'apiVersion': (string);
  'capabilities': (string)[];
  'pid': (number);
  'socketPath': (string);
  /**
   * 0 when not listening on TCP
   */
  'tcpPort': (number);
  'startedAtMs': (number);
  /**
   * "127.0.0.1:PORT" or "[::1]:PORT"; empty when not listening on TCP
   */
  'tcpAddress': (string);
}
