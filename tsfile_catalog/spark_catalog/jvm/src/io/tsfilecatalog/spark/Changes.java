package io.tsfilecatalog.spark;

import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.spark.sql.connector.catalog.TableChange;

/** {@code ALTER TABLE} changes as JSON for the delegate, which decides what is supported. */
final class Changes {
  private Changes() {}

  static ObjectNode toJson(TableChange change) {
    ObjectNode out = Client.object();
    out.put("kind", change.getClass().getSimpleName());
    if (change instanceof TableChange.SetProperty) {
      TableChange.SetProperty set = (TableChange.SetProperty) change;
      out.put("property", set.property());
      out.put("value", set.value());
    } else if (change instanceof TableChange.RemoveProperty) {
      out.put("property", ((TableChange.RemoveProperty) change).property());
    } else if (change instanceof TableChange.AddColumn) {
      TableChange.AddColumn add = (TableChange.AddColumn) change;
      out.set("column", Client.strings(add.fieldNames()));
      out.put("type", add.dataType().simpleString());
      out.put("nullable", add.isNullable());
      if (add.position() instanceof TableChange.After) {
        out.put("after", ((TableChange.After) add.position()).column());
      } else if (add.position() != null) {
        out.put("first", true);
      }
      out.put("has_default", add.defaultValue() != null);
    } else if (change instanceof TableChange.UpdateColumnType) {
      TableChange.UpdateColumnType update = (TableChange.UpdateColumnType) change;
      out.set("column", Client.strings(update.fieldNames()));
      out.put("type", update.newDataType().simpleString());
    } else if (change instanceof TableChange.RenameColumn) {
      TableChange.RenameColumn rename = (TableChange.RenameColumn) change;
      out.set("column", Client.strings(rename.fieldNames()));
      out.put("new_name", rename.newName());
    } else if (change instanceof TableChange.DeleteColumn) {
      TableChange.DeleteColumn delete = (TableChange.DeleteColumn) change;
      out.set("column", Client.strings(delete.fieldNames()));
      out.put("if_exists", Boolean.TRUE.equals(delete.ifExists()));
    } else if (change instanceof TableChange.UpdateColumnPosition) {
      TableChange.UpdateColumnPosition move = (TableChange.UpdateColumnPosition) change;
      out.set("column", Client.strings(move.fieldNames()));
      TableChange.ColumnPosition position = move.position();
      if (position instanceof TableChange.After) {
        out.put("after", ((TableChange.After) position).column());
      } else {
        out.putNull("after");
      }
    } else if (change instanceof TableChange.UpdateColumnNullability) {
      TableChange.UpdateColumnNullability nullability =
          (TableChange.UpdateColumnNullability) change;
      out.set("column", Client.strings(nullability.fieldNames()));
      out.put("nullable", nullability.nullable());
    } else if (change instanceof TableChange.ColumnChange) {
      out.set("column", Client.strings(((TableChange.ColumnChange) change).fieldNames()));
    }
    return out;
  }
}
